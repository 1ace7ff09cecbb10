"""The Textual terminal app. Reads the log only through ``replay``."""
