"""The simulation engine: seeds and streams, the vectorised simulator, segment agents, the
neighbouring-stream replacements and the optional compiled (numba) kernels.

* :mod:`bandits.engine.streams` — one root ``SeedSequence``, three streams per repetition;
* :mod:`bandits.engine.simulator` — regret simulation vectorised across repetitions;
* :mod:`bandits.engine.segments` — agents whose play is a sequence of known-length segments;
* :mod:`bandits.engine.replacement` — neighbouring reward streams (one unit changed);
* :mod:`bandits.engine.compiled` — the optional numba kernels behind one switch.

The engine knows no algorithm: an agent that plays better together with others of its kind
offers a joint player through :attr:`bandits.policy.Agent.joint_player`.
"""
