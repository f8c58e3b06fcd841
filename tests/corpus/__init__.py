"""A corpus of small trees, one per code shape that has fooled a spelling-based check, each
with a twin that differs in what the code DOES (see ``cases.py``), plus the stand-in FA4 the
differential oracle imports them against (``standin.py``)."""
