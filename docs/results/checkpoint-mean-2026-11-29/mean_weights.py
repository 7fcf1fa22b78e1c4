#!/usr/bin/env python3
"""The mean of several zerofarm weights files of one net: every float tensor
(weights, biases and BatchNorm's running statistics) averaged, the integer
counters (num_batches_tracked) taken from the first file, the config and model
version from the last. Stochastic weight averaging over a run's checkpoints, done
after the fact: it does not change what the run trained or played.

    /usr/bin/python3 mean_weights.py OUT.h5 MODEL.h5 [MODEL.h5 ...]

Needs tools/h5_weights.py (run from the repository root) and h5py, numpy.
"""
import sys

sys.path.insert(0, "tools")
import numpy as np  # noqa: E402

import h5_weights  # noqa: E402


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: mean_weights.py OUT.h5 MODEL.h5 [MODEL.h5 ...]")
    out, files = argv[1], argv[2:]
    total, first, cfg, version = None, None, None, None
    for f in files:
        state, c, v = h5_weights.load_weights(f)
        if total is None:
            total = {k: np.asarray(t, dtype=np.float64) for k, t in state.items()}
            first, cfg0 = state, c
        else:
            if sorted(state) != sorted(total) or c != cfg0:
                sys.exit(f"{f}: another net than {files[0]}'s")
            for k, t in state.items():
                total[k] += np.asarray(t, dtype=np.float64)
        cfg, version = c, v
    mean = {k: first[k] if np.asarray(first[k]).dtype.kind in "iu" else (t / len(files)).astype(np.float32)
            for k, t in total.items()}
    h5_weights.save_weights(out, mean, cfg, version=version)
    print(f"mean_weights.py: the mean of {len(files)} files -> {out} (version {version})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
