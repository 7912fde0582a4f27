SELECT localportal_ts('2024-01-02') AS "x" FROM "ds_func_0001" AS t LIMIT 1
