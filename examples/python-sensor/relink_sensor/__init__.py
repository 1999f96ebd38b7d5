"""relink-sensor: an example program of relinkd's peripheral role."""
