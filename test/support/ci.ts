/**
 * True when the tests run under CI (`CI` set to anything but empty, `0` or `false`, as CI services
 * set it). There a suite or set-up that cannot run fails the run instead of being skipped (issue 34):
 * a green CI must mean every suite ran.
 */
export const UNDER_CI = (() => {
  const value = (process.env.CI ?? '').trim().toLowerCase();
  return value !== '' && value !== '0' && value !== 'false';
})();
