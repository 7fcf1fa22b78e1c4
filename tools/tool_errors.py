"""A tool's main, run so that a missing, unreadable or foreign input file ends
it with one line (the tool, the file, the reason) and exit 1, not a traceback.

    if __name__ == "__main__":
        sys.exit(tool_errors.run(main, sys.argv))
"""
import os
import sys


def run(main, *args):
    name = os.path.basename(sys.argv[0])
    try:
        return main(*args)
    except OSError as e:  # a file missing or unreadable
        sys.exit(f"{name}: {e.filename}: {e.strerror}")
    except (KeyError, ValueError) as e:  # a file of another kind (a column missing, a bad line)
        sys.exit(f"{name}: not the file this tool reads ({type(e).__name__}: {e})")
