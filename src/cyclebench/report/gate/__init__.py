"""What `cyclebench ci` writes (docs/ci.md), one file per format: the terminal's table
(``console``), the Markdown summary a reviewer reads (``summary``), JUnit XML for any CI's test
view (``junit``). Each reads a gate.Gate."""
