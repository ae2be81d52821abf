// Runs every benchmark under bench/. Each bench prints its figures beside a baseline from the same run.
console.log("No benchmarks yet.")
