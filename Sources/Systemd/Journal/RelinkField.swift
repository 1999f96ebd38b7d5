/// The journal fields this module writes on its own: the `MESSAGE_ID` of
/// ``RelinkMessageID/metadata``, and two of relink's fields, for the event
/// name beside it and for the error of a log call (``JournalLogHandler``,
/// and the notify services' failures).
///
/// The list of relink's journal field names is `RelinkModel.JournalField`,
/// which every other module uses as its metadata keys. This module imports no
/// relink module, so it spells the two it needs here; `SystemdTests` checks
/// both are cases of `JournalField`, and its source scan allows no other
/// `RELINK_` name outside that enum.
enum RelinkField {
    /// The journal's catalog key; see ``RelinkMessageID``. Defined by journald.
    static let messageID = "MESSAGE_ID"
    /// `JournalField.event`: the event name (see ``RelinkMessageID/eventName``).
    static let event = "RELINK_EVENT"
    /// `JournalField.error`: the error, as text or a D-Bus error name.
    static let error = "RELINK_ERROR"
}
