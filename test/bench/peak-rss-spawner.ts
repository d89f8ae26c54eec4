// Runs the command in its arguments and prints its peak RSS in bytes on stdout (the command's own
// stdout is dropped, its stderr passed through), then exits with the command's code. On Linux wait4's
// ru_maxrss is never below the peak of the process that spawned the child (exec keeps the high-water
// mark of the address space it leaves), so a bench process that holds generated data spawns through
// this small one: its own ~30 MB peak stays below any Gatehouse command's.
export {};

const child = Bun.spawn(process.argv.slice(2), { stdout: 'ignore', stderr: 'inherit' });
await child.exited;
process.stdout.write(`${child.resourceUsage()!.maxRSS}\n`);
process.exit(child.exitCode ?? 1);
