"""The engine's version: saved runs and seek indexes record it, and stored snapshots are only
reused by the same version (app.replay). A leaf module, so ``result`` can name it without importing
``simulation``.
"""
ENGINE_VERSION = "1.0.0"
