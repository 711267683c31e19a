"""The program the generator made for seed 134 before its productions grew (tests/test_second_order.py)."""

import numpy as np


def f(x, v, s, flag):
    if s > 0.0:
        t1 = np.sqrt(1.0 + np.tanh(x[0]) * np.tanh(x[0]))
    elif flag:
        if not flag:
            if not flag:
                t2 = np.tanh((-np.minimum(0.05, 3.0)))
                t3, t4 = (-x[:, -1:]), np.maximum(x[0], -0.2)
            else:
                if (np.mean((x[-1] / 3.0)) < 0.0) or (np.sqrt(1.0 + 0.5 * 0.5) > 0.0):
                    t5 = (x[1, 2] + x[-1])
                else:
                    s = (x[-1] - (0.1 - x[-1]))
            t6 = v[-1]
        elif (np.mean(x[:, -1:]) <= 0.0) or (np.sin(x[1, 2]) <= 0.0):
            t7 = ((-(-0.75)) if np.mean(np.tanh(v)) >= 0.0 else np.abs(2.0))
        else:
            t8 = np.tanh(((-0.75) - v[0]))
    else:
        v = abs(((s * x) * np.maximum(x[-1], 1.2)))
    t9 = ((x[1, 2] ** 2.0) * (s * t1[0]))
    if np.mean(0.5) <= 0.0:
        return np.sum(np.sum(np.sum((-0.75))))
    if np.mean(v) >= 0.0:
        t10 = (-np.maximum(0.05, (v[-1] - v[0])))
        acc11 = 0.0
        for i in range(2):
            t12 = np.minimum(t1[0], 0.05)
            t12 = np.minimum(np.cos((v[-1] * (i * 0.5))), 0.3)
            acc11 += np.cos(np.mean(t9))
    t13 = np.cos((t1[-1] * v[0]))
    if (not flag) and (not flag):
        return np.sum(np.sin(abs(v[-1])))
    t14, t15 = (t1[0] if (np.mean((x[1, 2] * x[1, 2])) > 0.0) and (np.mean(np.minimum(0.3, v[0])) <= 0.0) else np.minimum(0.05, t1[-1])), (x[1, 2] / (1.5 + np.tanh(v[-1])))
    return np.sum(np.maximum(v[0], 1.2)) + np.sum(t9)
