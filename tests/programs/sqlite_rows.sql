-- An allocation-heavy sqlite3 job: a table of rows generated here, three
-- indexes, an aggregate, a join, a sort and VACUUM. {rows}, the row count,
-- is filled in by strata-lab bench malloc (smaller under --quick).

PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
PRAGMA temp_store = MEMORY;
PRAGMA cache_size = -65536;
CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c REAL);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < {rows})
INSERT INTO t SELECT i, (i * 7919) % 100003, printf('%08x-%d', (i * 2654435761) % 4294967296, i % 977), i * 0.5 FROM s;
CREATE INDEX t_a ON t(a);
CREATE INDEX t_b ON t(b);
CREATE INDEX t_c ON t(c);
CREATE TABLE u AS SELECT a, count(*) AS n, sum(c) AS s FROM t GROUP BY a;
SELECT count(*), sum(u.n), round(sum(u.s)) FROM t JOIN u ON t.a = u.a WHERE t.id % 10 = 0;
SELECT b FROM t ORDER BY b LIMIT 1 OFFSET ({rows} / 2);
SELECT count(DISTINCT substr(b, 1, 3)) FROM t;
DELETE FROM t WHERE id % 3 = 0;
VACUUM;
SELECT count(*) FROM t;
