"""An example relink client in Python (dbus-fast): a heart-rate band program
that keeps its link and its heart-rate subscription through relinkd, and
picks up where it left off after a crash."""
