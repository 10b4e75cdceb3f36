#!/usr/bin/env python3
"""Two binaries alternated run by run with the same arguments: the median CPU
time (getrusage of the child) and wall time of each. Usage:
benches/cpu-pair.py OLD NEW N ARGS..."""
import subprocess, resource, sys, statistics, time
old, new, n = sys.argv[1], sys.argv[2], int(sys.argv[3]); args = sys.argv[4:]
def run(b):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN); t0=time.perf_counter()
    subprocess.run([b]+args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t1=time.perf_counter(); r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r1.ru_utime+r1.ru_stime-r0.ru_utime-r0.ru_stime)*1000, (t1-t0)*1000
res={old:[],new:[]}
for i in range(n):
    for b in ((old,new) if i%2 else (new,old)): res[b].append(run(b))
for name,b in (("before",old),("after",new)):
    cpu=statistics.median(x[0] for x in res[b]); wall=statistics.median(x[1] for x in res[b])
    print(f"{name}: cpu p50 {cpu:.2f} ms, wall p50 {wall:.2f} ms")
