"""Scenario documents (docs/scenario-format.md): loading and validation (``document``,
``fields``, ``validators``, ``timeline``) and the library of stories (``library``).
"""
