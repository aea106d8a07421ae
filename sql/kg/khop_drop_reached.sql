-- Free the BFS state of the last k-hop pass.
DROP TABLE IF EXISTS _khop_reached
