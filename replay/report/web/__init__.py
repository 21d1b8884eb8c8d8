"""The web view of a run: the outcome grid, and for each cell the summary beside the history it
replaced, PRE and POST side by side with where they part, the tests and the model calls.

`replay view` serves the pages on 127.0.0.1 (`server`); `replay report --html DIR` writes the
same pages as files (`pages.write_site`). Both only read the store (`data`).
"""
