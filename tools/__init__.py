"""What the repository runs on itself, not shipped in the wheel: the generators of the docs'
reference sections (``apidoc``, ``export_readme``, ``agents_readme``: ``make docs``; the tests fail
when a section is out of date), the snapshot scenes (``scenes``: the snapshot tests and
``make screenshots`` draw the same ones) and the screenshot script (``screenshots``).
"""
