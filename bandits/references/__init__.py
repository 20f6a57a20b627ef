"""Non-private references: UCB1 (Auer, Cesa-Bianchi & Fischer 2002) and Beta-Bernoulli Thompson
sampling (Agrawal & Goyal 2012), run through the same pipeline with privacy "none".
"""
