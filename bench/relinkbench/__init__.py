"""relink's simulated-Bluetooth bench: a private dbus-daemon, a patched BlueZoo
and simulated LE peripherals, driven over a JSON-lines control protocol."""
