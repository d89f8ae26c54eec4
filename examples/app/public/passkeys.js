// Browser side of the passkey ceremonies, on @simplewebauthn/browser (loaded before this file as
// the global SimpleWebAuthnBrowser). Every POST carries the page's CSRF token in a header.
(() => {
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const post = async (path, body) => {
    const answer = await fetch(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrf },
      body: JSON.stringify(body ?? {}),
    });
    const json = await answer.json();
    if (!answer.ok) throw new Error(json.error ?? 'The request failed.');
    return json;
  };
  const show = (message) => {
    const box = document.getElementById('passkey-error');
    box.textContent = message;
    box.hidden = false;
  };
  const run = (optionsPath, verifyPath, ceremony) => async () => {
    try {
      const optionsJSON = await post(optionsPath);
      const response = await ceremony({ optionsJSON });
      const { redirect } = await post(verifyPath, { response });
      window.location.assign(redirect);
    } catch (error) {
      show(error.message);
    }
  };
  const { startAuthentication, startRegistration } = window.SimpleWebAuthnBrowser;
  document.getElementById('passkey-sign-in')?.addEventListener('click', run('/passkeys/sign-in/options', '/passkeys/sign-in', startAuthentication));
  document.getElementById('passkey-add')?.addEventListener('click', run('/account/passkeys/options', '/account/passkeys', startRegistration));
})();
