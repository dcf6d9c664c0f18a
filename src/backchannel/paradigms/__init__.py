"""paradigms"""
