"""Programs behind the aliasing tests in tests/differentiate/test_silent_failures.py: a<n> update an array
another live name shares (refused), ok<n> do not."""

import numpy as np
def a1(y):
    z = y
    z += 1.0
    return np.sum(y * z)
def a2(y):
    z = y[1:]
    z[0] = 5.0
    return np.sum(y)
def a3(y):
    z = y.T
    z *= 2.0
    return np.sum(y ** 2)
def ok1(y):
    z = y.copy()
    z += 1.0
    return np.sum(y * z)
def ok2(y):
    z = y
    z = z + 1.0
    return np.sum(y * z)
def ok3(y):
    z = y
    z += 1.0
    return np.sum(z ** 2)
def a4(y):
    w = y
    s = 0.0
    for i in range(3):
        s = s + np.sum(w)
        y += 1.0
    return s
def ok4(y):
    s = 0.0
    for i in range(3):
        y += 1.0
        w = y.T
        s = s + np.sum(w)
    return s + np.sum(w)
def a5(y):
    lst = [y, y * 2]
    z = lst[0]
    z += 1.0
    return np.sum(y)
def ok5(x):
    y = x * 1.0
    y[0] = 3.0
    return np.sum(y.T * x)
def a6(xs):
    s = 0.0
    for row in xs:
        row += 1.0
        s = s + np.sum(row)
    return s + np.sum(xs)
def ok6(x):
    y = np.zeros(3)
    for i in range(3):
        y[i] = x[i] * 2.0
    return np.sum(y * y)


def ok7(x):
    m = np.outer(x, x)
    s = 0.0
    for row in m.T:
        z = m.copy()
        z /= 2.0
        s = s + np.sum(row) * np.sum(z)
    for row in z.T:  # the name comes back bound to a view of z: not what the update above saw
        s = s + np.sum(row)
    return s


def ok8(x):
    s = 0.0
    z = x * 1.0
    for k in range(2):
        if np.sum(x) > 100.0:
            z = x * 2.0
        z -= 1.0  # the version joined after the branch is still the user's z
        s = s + np.sum(z * z)
    return s


def ok9(x):
    h = np.tanh(x)
    hs = [h]
    for k in range(2):
        hs.append(np.sin(hs[-1]))
    return np.sum(np.stack(hs)) + np.sum(h)  # appending to the list changes no element


def a7(x):
    h = np.tanh(x)
    hs = [h, x * 2.0]
    first = hs[0]
    first += 1.0
    return np.sum(h)


def ok10(x):
    y = x * 1.0
    if np.sum(x) > 0.0:
        t = y[1:]  # a view of y, on this path only
    else:
        y /= 2.0  # the other path: no name shares y here
        t = y[:2] * 3.0
    return np.sum(t) * np.sum(y * y)


def a8(x):
    y = x * 1.0
    t = x
    for k in range(3):
        if k == 0:
            t = y[1:]  # bound on the first trip
        else:
            y *= 1.5  # changes t on the next trips
    return np.sum(t)


def a9(y):
    z = y * 1.0
    if np.sum(y) > 100.0:
        return np.sum(y)  # the rest of the function becomes the other branch
    z = y * 2.0
    w = z
    w[0] = np.tanh(z[0])
    return np.sum(z)


def ok11(x):
    prev = x * 0.0
    for k in range(3):
        cur = x * (k + 1.0)  # a new array each trip
        cur[0] = cur[0] * np.sin(x[1])  # prev holds the last trip's array, not this one
        prev = cur
    return np.sum(prev * x)


def a10(x):
    y = x * 1.0
    for k in range(2):
        z = y  # the same array as y on every trip
        z[0] = x[1] * 3.0
    return np.sum(y * x)


def a11(x):
    keep = x * 2.0
    cur = x * 1.0
    for k in range(3):
        cur = x * (k + 1.0)
        keep = cur
        if k == 1:
            break
    cur[1] = np.sin(x[0])  # keep is this array after the loop (left by break or not)
    return np.sum(keep * x)


def ok12(x):
    acc = x * 1.0
    acc += np.sin(x)  # an update before the loop; the loop's carry rebinds the same name
    keep = x * 0.0
    for k in range(3):
        keep = acc  # the array acc holds on this trip, not the one updated above
        acc = acc * 0.5 + keep[::-1]
    return np.sum(acc * x) + np.sum(keep)
