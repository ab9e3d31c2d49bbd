"""Reducing out-of-focus beam maps to a surface, shared by the real maps and the closure test: the sources and
their maps, the ladder of orders, the surface and its uncertainty, the optics apart from panels, the order
truncation and the correlated noise."""
