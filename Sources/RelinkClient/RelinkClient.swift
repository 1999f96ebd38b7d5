// Placeholder until this module's issue is worked on; see the README's status section.
