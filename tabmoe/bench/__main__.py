"""``python -m tabmoe.bench`` = the ``tabmoe-bench`` command."""

from ._entry import main

if __name__ == "__main__":
    main(prog_name="tabmoe-bench")
