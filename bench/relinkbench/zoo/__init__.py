"""BlueZoo, patched at start-up to behave like real BlueZ where relink needs it.

Nothing in site-packages is edited: the classes are subclassed and the
subclasses are put in place of the originals before BlueZoo starts.
See bench/README.md ("BlueZoo patches") for what each patch does and why.
"""
