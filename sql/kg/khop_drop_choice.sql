-- Free the fan-out choices of the last k-hop pass.
DROP TABLE IF EXISTS _khop_choice
