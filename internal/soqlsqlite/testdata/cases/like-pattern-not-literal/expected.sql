SELECT t."t" AS "t" FROM "ds_func_0001" AS t WHERE (localportal_like(t."t", t."t")) ORDER BY t."_rowid" ASC LIMIT 1000
