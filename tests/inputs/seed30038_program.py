"""The program the generator made for seed 30038 (tests/differentiate/test_silent_failures.py): a name two loops bind, the second inside a branch."""

import numpy as np


def helper1(a, b):
    z1 = np.copy(b)
    z1 -= (np.cos((z1 + b[-1])) + np.zeros((3, 4))).shape[1]
    z1 += np.cos(z1[0])
    return 1.5

def make_helper2(scale):
    def helper2(a):
        return helper1(np.tanh(np.argmax((np.sin((np.cos(a[-1]) + np.zeros((3, 4))).sum()) + np.zeros(4)))), (((1.0 + np.sin((-0.75)) * np.sin((-0.75))) ** 0.5) + np.zeros(4)))

    return helper2


helper2 = make_helper2(0.5)

def f(x, v, s, flag):
    t2, t3 = (-np.sum(x[x > 0.2])), np.minimum(x[[1, 1, 0]], -0.2)
    lst4 = []
    acc5 = ((-s) + (v * v[0]))
    for i, p6 in enumerate(t3.T, 1):
        t7, t8 = (-t3[:, -1:]), ((-acc5) * (x ** 2.0))
        t9 = np.cos((np.sqrt(1.0 + x[0] * x[0]) * ((-0.75) * t8[-1])))
        lst4.append((np.cos(((-1.5) + np.log(1.0 + t9[0] * t9[0]))) + np.zeros(4)))
        acc5 += np.cos((helper1(np.sin(np.sum(t7[t7 > 0.0])), (p6[-2] + np.zeros(4))) / (2.0 + np.cos((t9[-1] / (1.5 + np.tanh(np.tanh(t2))))))))
    if (np.mean(np.log(1.0 + v * v)) > 0.7525) or (np.max((t8 / (1.0 + x * x))) <= -0.5191):
        z10 = x
        z10 = z10 + helper1(np.tanh(np.sum(v[v > 0.0])), np.tanh(t8[0]))
        acc11 = np.tanh(np.mean(np.sqrt(1.0 + t8[np.array([2, 0, 1])] * t8[np.array([2, 0, 1])])))
        for p6, a12 in zip(v, t7):
            t13 = np.mean((t8[[1, 1, 0]] * lst4[3]), axis=0, keepdims=True)
            acc11 = acc11 * np.cos(((np.sum(lst4[-4]) > 0.2) * np.sum(t9[t9 > 0.0])))
        else:
            z14 = v.copy()
            z14 /= (1.0 + ((a12[0] * acc5) if not flag else np.sqrt(1.0 + x[0] * x[0])) * ((a12[0] * acc5) if not flag else np.sqrt(1.0 + x[0] * x[0])))
    return np.sum((np.minimum(0.05, helper1(np.tanh(np.sum(t9[t9 > 0.0])), t3[-1])) ** 3)) + np.sum(t7)
