import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The reference side of `npm run bench -- compare <ref>`: the commit checked out in a git worktree
 * of its own, `$TMPDIR/tds-bench-trees/<commit>`, kept for the next comparison with the same commit
 * (`git worktree remove` or deleting the folder and `git worktree prune` clears it). Its node_modules
 * is this checkout's (a symlink) when both package-lock.json files are the same bytes; otherwise
 * `npm ci --prefer-offline` installs its own, from npm's cache where it holds the packages.
 */
export interface Checkout {
  /** The ref as given, and the commit it names. */
  ref: string;
  commit: string;
  root: string;
  /** How its node_modules came: shared with this checkout, or its own `npm ci`. */
  modules: 'shared' | 'npm ci';
  /** True when the worktree was made by this call (false: reused). */
  created: boolean;
}

export const TREES_DIR = path.join(os.tmpdir(), 'tds-bench-trees');

const git = (root: string, ...args: string[]) => execFileSync('git', ['-C', root, ...args], { encoding: 'utf8' }).trim();

export function checkout(repo: string, ref: string, log: (line: string) => void = () => {}): Checkout {
  let commit: string;
  try {
    commit = git(repo, 'rev-parse', '--verify', '--quiet', `${ref}^{commit}`);
  } catch {
    throw new Error(`${ref} names no commit of ${repo}`);
  }
  const root = path.join(TREES_DIR, commit);
  const ready = path.join(root, '.bench-tree-ready');
  const sameLock = () =>
    existsSync(path.join(root, 'package-lock.json')) &&
    readFileSync(path.join(root, 'package-lock.json')).equals(readFileSync(path.join(repo, 'package-lock.json')));
  const modulesLink = path.join(root, 'node_modules');
  const ours = path.join(repo, 'node_modules');
  if (existsSync(ready)) {
    if (readFileSync(ready, 'utf8').trim() !== 'shared') return { ref, commit, root, modules: 'npm ci', created: false };
    // Shared with the checkout that made it, which may be another clone (CI's): pointed at this one's
    // node_modules when the lockfiles match, otherwise made again below.
    if (sameLock()) {
      if (readlinkSync(modulesLink) !== ours) {
        rmSync(modulesLink, { force: true });
        symlinkSync(ours, modulesLink, 'dir');
      }
      return { ref, commit, root, modules: 'shared', created: false };
    }
  }
  // A folder left half-made by an interrupted run: removed, and its worktree entry pruned.
  if (existsSync(root)) rmSync(root, { recursive: true, force: true });
  git(repo, 'worktree', 'prune');
  log(`checking out ${ref} (${commit.slice(0, 12)}) in ${root}`);
  git(repo, 'worktree', 'add', '--detach', '--force', root, commit);
  let modules: Checkout['modules'];
  if (sameLock()) {
    symlinkSync(ours, modulesLink, 'dir');
    modules = 'shared';
  } else {
    log(`${ref}: package-lock.json differs from this checkout's; npm ci --prefer-offline in the worktree`);
    execFileSync('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: root, stdio: ['ignore', 2, 2] });
    modules = 'npm ci';
  }
  writeFileSync(ready, `${modules}\n`);
  return { ref, commit, root, modules, created: true };
}

/** The commit of a checkout's HEAD, and whether its tracked files differ from it. */
export function describeTree(root: string): { commit: string; dirty: boolean } {
  return { commit: git(root, 'rev-parse', 'HEAD'), dirty: git(root, 'status', '--porcelain', '--untracked-files=no') !== '' };
}
