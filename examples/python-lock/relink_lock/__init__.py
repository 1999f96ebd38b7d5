"""An example relink client in Python (dbus-fast): a lock program that keeps
its link and its lock-state subscription through relinkd, and picks up where
it left off after a crash."""
