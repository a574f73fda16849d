// filled in by the topology work
