SELECT rtrim('  a  ') AS "x" FROM "ds_func_0001" AS t LIMIT 1
