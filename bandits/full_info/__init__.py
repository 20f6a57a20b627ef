"""Private online learning with full information (Hu, Huang, Mehta & Hegde): RNM-FTNL and the
naive FTNL, with their ``dpaudit run`` specifications and audit pairs.
"""
