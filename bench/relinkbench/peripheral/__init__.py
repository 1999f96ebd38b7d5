"""Simulated LE peripherals: separate processes that register an LE
advertisement and a GATT application on their own (BlueZoo) adapter."""
