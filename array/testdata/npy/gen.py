#!/usr/bin/env python3
"""Writes the .npy files of this directory with NumPy itself.

The tests of package array (npy_numpy_test.go) read them with ReadNPY and
compare them with the values below, hard-coded there; they also write the
C-order little-endian ones with WriteNPY and compare the bytes. The tests
do not need Python: run this only to make the files again.

    cd array/testdata/npy && /usr/bin/python3 gen.py

Made with NumPy 1.24.2 (format version 1.0 headers).
"""
import numpy as np

files = {
    # x[i, j] = (4*i + j) / 4 - 1
    "f8_c.npy": np.arange(12, dtype="<f8").reshape(3, 4) / 4 - 1,
    # x[i, j] = float32(3*i + j) / float32(3), rounded to float32
    "f4.npy": (np.arange(6, dtype="<f4") / np.float32(3)).reshape(2, 3),
    # x[i] = (i - 4) * 3**35, beyond 2**53
    "i8.npy": (np.arange(8, dtype="<i8") - 4) * 3**35,
    # x[i] = i % 3 == 0
    "b1.npy": np.arange(7) % 3 == 0,
    # x[i, j] = 5*i + j, stored in Fortran order
    "f8_fortran.npy": np.asfortranarray(np.arange(15, dtype="<f8").reshape(3, 5)),
    # x[i, j, k] = 12*i + 4*j + k (int32), stored in Fortran order
    "i4_fortran_3d.npy": np.asfortranarray(np.arange(24, dtype="<i4").reshape(2, 3, 4)),
    # x[i, j, k] = 12*i + 4*j + k
    "i8_3d.npy": np.arange(24, dtype="<i8").reshape(2, 3, 4),
    # a 0-d array: 2.5
    "f8_0d.npy": np.array(2.5),
    # x[i] = i / 4 for i in 0..4
    "f8_1d.npy": np.linspace(0, 1, 5),
    # x[i, j] = (3*i + j) * 1.5, big-endian
    "f8_be.npy": (np.arange(6, dtype=">f8") * 1.5).reshape(2, 3),
    # x[i] = i - 3, big-endian int32
    "i4_be.npy": np.arange(-3, 3, dtype=">i4"),
    # x[i] = 250 + i
    "u1.npy": np.arange(250, 256, dtype=np.uint8),
    # shape (0, 3)
    "f8_empty.npy": np.zeros((0, 3)),
}

for name, x in files.items():
    np.save(name, x)
    print(name, x.dtype.str, x.shape, "fortran" if x.flags.f_contiguous and not x.flags.c_contiguous else "")
