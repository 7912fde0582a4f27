SELECT t."b" AS "b", sum(t."m") AS "total" FROM "ds_func_0001" AS t GROUP BY t."b" HAVING (sum(t."m") > 30) ORDER BY sum(t."m") DESC NULLS FIRST LIMIT 1000
