"""A small Elman RNN fitted to predict the next value of a short sequence.

The recurrence is a Python `for` loop over time steps calling a `cell` helper: the generated
forward sweep keeps a per-iteration tape of what the backward sweep needs, and the backward sweep
runs the loop in reverse.

Run from the repository root:  python examples/rnn.py
The gradient code is generated/rnn_grad.py (`s2sgrad emit examples -o generated`).
"""

import numpy as np

import s2sgrad

STEPS = 6


def cell(h, x_t, w_h, w_x, b):
    """One step: the new hidden state from the old one and the input at this step."""
    return np.tanh(h @ w_h + x_t * w_x + b)


def readout(h, w_o, b_o):
    return h @ w_o + b_o


@s2sgrad.differentiable(wrt=("w_h", "w_x", "b", "w_o", "b_o"))
def loss(w_h, w_x, b, w_o, b_o, xs, ys):
    """Mean squared error of one-step-ahead predictions; xs, ys: (steps, batch)."""
    h = np.zeros((xs.shape[1], w_h.shape[0]))
    total = 0.0
    for t in range(xs.shape[0]):
        h = cell(h, xs[t][:, None], w_h, w_x, b)
        total = total + np.sum((readout(h, w_o, b_o) - ys[t]) ** 2)
    return total / xs.size


def make_data(rng, batch=32):
    """Windows of a damped sine wave: inputs xs[t], targets ys[t] = xs[t + 1]."""
    start = rng.uniform(0.0, 2.0 * np.pi, size=batch)
    t = start[None, :] + 0.5 * np.arange(STEPS + 1)[:, None]
    wave = np.sin(t) * np.exp(-0.05 * t)
    return wave[:-1], wave[1:]


def init(rng, hidden=8):
    return (0.3 * rng.normal(size=(hidden, hidden)), 0.5 * rng.normal(size=hidden), np.zeros(hidden),
            0.3 * rng.normal(size=hidden), 0.0)


if __name__ == "__main__":
    rng = np.random.default_rng(1)
    xs, ys = make_data(rng)
    params = init(rng)
    first = loss(*params, xs, ys)
    velocity = tuple(np.zeros_like(p) for p in params)
    for step in range(801):
        value, grads = loss.value_and_grad(*params, xs, ys)
        velocity = tuple(0.9 * v - 0.05 * g for v, g in zip(velocity, grads))
        params = tuple(p + v for p, v in zip(params, velocity))
        if step % 100 == 0:
            print(f"step {step:3d}  loss {value:.5f}")
    last = loss(*params, xs, ys)
    assert last < 0.1 * first, "training did not reduce the loss"
    print(f"loss {first:.4f} -> {last:.5f}")
