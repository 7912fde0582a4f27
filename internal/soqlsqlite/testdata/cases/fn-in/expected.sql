SELECT t."t" AS "t" FROM "ds_func_0001" AS t WHERE (t."t" IN ('BAR', 'bar')) ORDER BY t."_rowid" ASC LIMIT 1000
