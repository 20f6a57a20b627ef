"""stub"""
CASES: list = []
