-- Parse one CSV triples file straight into staging; malformed rows land in the temporary table _csv_rej_err
-- with their line. -- Fields are trimmed of surrounding spaces ("a, b, c").
INSERT INTO _st_triples
SELECT trim(head), trim(relation), trim(tail), $src, NULL
FROM read_csv(
    $path,
    delim = $delim, quote = $quote, escape = $quote, header = $header, encoding = $encoding,
    columns = {'head': 'VARCHAR', 'relation': 'VARCHAR', 'tail': 'VARCHAR'},
    auto_detect = false, strict_mode = true, null_padding = false,
    store_rejects = true, rejects_table = '_csv_rej_err', rejects_scan = '_csv_rej_scan'
)
