"""What the example relink clients in Python share: a thin client for
relinkd's D-Bus API (`relink`), events and their payloads (`events`), and
the program every client of one peripheral runs (`program`): register,
print the restored state, find the peripheral (already known, already
connected, given by address, or scanned for with a time limit), connect,
subscribe, print every event once in order, acknowledge, register again
when relinkd comes back."""
