"""People and checkpoints in one GoBigger game, on screen: gobigger-play (play.py)."""
