# A file the layer test parses (never imports) to prove its checker finds both import forms.
import os  # noqa: F401

from textual.app import App  # noqa: F401
