SELECT sum(t."m") AS "s" FROM (SELECT t."m" AS "m" FROM "ds_func_0001" AS t WHERE (t."m" > 10)) AS t LIMIT 1000
