"""Peer pressure: honest agents discuss a factual question while adversaries push a false answer."""
