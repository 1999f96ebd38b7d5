"""The real-bluetoothd backend of the bench (issue #20): a virtme-ng VM with
Debian's kernel, btvirt's emulated controllers and Debian's bluetoothd 5.66.
`vm` runs on the host, `guest` and `bluetoothd` inside the VM."""
