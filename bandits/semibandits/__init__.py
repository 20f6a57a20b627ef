"""(Locally) private combinatorial semi-bandits (Chen, Zheng, Zhou, Yang, Chen & Wang, ICML 2020):
CUCB-LDP1, CUCB-LDP2, CUCB-DP and the non-private CUCB; their audit and specifications.
"""
