"""``python -m cyclebench``: the program (cyclebench.entry)."""

from cyclebench.entry import main

main()
