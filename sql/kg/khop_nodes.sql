-- The node set of each query's subgraph: everything the BFS reached (seeds included, even when not in the KG).
SELECT qid, node FROM _khop_reached ORDER BY qid, node
