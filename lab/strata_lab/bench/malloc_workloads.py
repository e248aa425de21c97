"""The workloads of `strata-lab bench malloc`: which program of bench/malloc
runs with which arguments, at full size, under --quick and under callgrind.
Issue 20's three patterns (stress2, prodcons, cachescratch) run at 2 threads
or fewer, the machine's core count, where the independent suite saw them;
barnes is the suite's Barnes-Hut simulation, one thread."""

WORKLOADS = {  # name -> (description, program, full-size args, --quick args, callgrind args)
    "churn": ("small-object churn, 16-64 B, random alloc/free over a live window, 1 thread", "churn",
              [], ["--ops", "1000000", "--window", "50000"], ["--ops", "300000", "--window", "20000"]),
    "larson": ("producer/consumer, 2 threads x generations, 16-512 B, half freed by the other thread", "larson",
               [], ["--ops", "100000", "--window", "10000", "--generations", "2"],
               ["--ops", "50000", "--window", "5000", "--generations", "2"]),
    "large": ("large objects, 64 KiB-8 MiB log-uniform, 1/4 realloc, every page written", "large",
              [], ["--ops", "800"], ["--ops", "300"]),
    "threadchurn": ("8 short-lived threads x 100 iterations, objects passed through a shared table, "
                    "window freed in slot order at exit", "threadchurn",
                    [], ["--iterations", "8", "--ops", "4000"], ["--iterations", "6", "--ops", "3000"]),
    "smallmix": ("1 thread, 16 B-2 KiB varied sizes, 1/4 of visits realloc-grow, bulk frees", "smallmix",
                 [], ["--ops", "1000000", "--window", "20000"], ["--ops", "400000", "--window", "20000"]),
    "burst": ("256 MiB of 64 B objects, freed by the same thread, 1 s idle", "burst",
              [], ["--mib", "32", "--idle-ms", "200"], ["--mib", "16", "--idle-ms", "50"]),
    "burst-remote": ("256 MiB of 64 B objects, freed by a second thread, 1 s idle", "burst",
                     ["--remote", "1"], ["--remote", "1", "--mib", "32", "--idle-ms", "200"],
                     ["--remote", "1", "--mib", "16", "--idle-ms", "50"]),
    "server": ("larson with mixed sizes: 16 B-4 KiB log-uniform, 2 threads, half freed by the other thread",
               "larson", ["--min-size", "16", "--max-size", "4096", "--log-sizes", "1", "--ops", "500000",
                          "--window", "20000"],
               ["--min-size", "16", "--max-size", "4096", "--log-sizes", "1", "--ops", "100000",
                "--window", "5000", "--generations", "2"],
               ["--min-size", "16", "--max-size", "4096", "--log-sizes", "1", "--ops", "50000",
                "--window", "5000", "--generations", "2"]),
    "xfree": ("16 B-16 KiB log-uniform, 2 threads, nearly every object freed by the other thread", "xfree",
              [], ["--ops", "50000"], ["--ops", "30000"]),
    "simple": ("1 thread, batches of 25-1600 objects of one size (16 B-1 KiB) allocated, then all freed",
               "simple", [], ["--ops", "1000000"], ["--ops", "400000"]),
    "threadsmall": ("2 threads, each with its own 1000 slots: free a random slot, allocate 16 B-4 KiB "
                    "(3/4 <= 128 B) into it; a small program's footprint", "threadsmall",
                    [], ["--ops", "200000"], ["--ops", "100000"]),
    "stress": ("32 short-lived threads x 10 iterations (mimalloc's test-stress pattern), calloc 8 B-10 MiB, "
               "objects swapped through a shared 1000-slot table", "stress",
               [], ["--iterations", "2", "--scale", "10"], ["--iterations", "2", "--scale", "5"]),
    "stress2": ("thread churn at the core count (issue 20): stress at 2 threads x 4 iterations, ~100 MiB live, "
                "objects swapped through the shared table", "stress",
                ["--threads", "2", "--iterations", "4", "--scale", "1300"],
                ["--threads", "2", "--iterations", "2", "--scale", "100"],
                ["--threads", "2", "--iterations", "2", "--scale", "200"]),
    "prodcons": ("producer-consumer (issue 20): one thread allocates 16-128 B, the other frees every object "
                 "(every free remote)", "prodcons", [], ["--ops", "500000"], ["--ops", "300000"]),
    "cachescratch": ("allocate-write-free loops (issue 20; Hoard's cache-scratch at 1 thread): an 8 B object "
                     "written 20000 times, x1000", "cachescratch",
                     [], ["--iterations", "200", "--repetitions", "5000"],
                     ["--iterations", "1000", "--repetitions", "200"]),
    "cachethrash": ("Hoard's cache-thrash at 2 threads: each thread allocates an 8 B object, writes it 20000 "
                    "times and frees it, x1000, both at once (false sharing if their objects share a line)",
                    "cachescratch", ["--handoff", "0", "--threads", "2"],
                    ["--handoff", "0", "--threads", "2", "--iterations", "200", "--repetitions", "5000"],
                    ["--handoff", "0", "--threads", "2", "--iterations", "1000", "--repetitions", "200"]),
    "sh6": ("sh6bench at 2 threads: batches of 1000 objects of 16 B-1 KiB (sawtooth) freed LIFO, FIFO or "
            "odd-then-even by turns; 1 in 64 survives into 512 long-lived slots", "sh6",
            [], ["--rounds", "400"], ["--rounds", "150"]),
    "sh8": ("sh8bench at 2 threads: sh6 with the long-lived slots shared, so survivors are freed by either "
            "thread", "sh6", ["--cross", "1"], ["--cross", "1", "--rounds", "400"], ["--cross", "1", "--rounds", "150"]),
    "barnes": ("Barnes-Hut n-body (issue 20; Olden/SPLASH barnes), 1 thread: 8192 bodies x 80 steps, an octree "
               "of 112 B cells built each step (many small mallocs, no frees) and dropped", "barnes",
               [], ["--bodies", "2048", "--steps", "10"], ["--bodies", "2048", "--steps", "4"]),
}
PROGRAM_NAMES = sorted({w[1] for w in WORKLOADS.values()})
