// Application icons (api/web/app-icon.ts): an image that fails to load is hidden, uncovering the
// application's initial drawn behind it. The image may have failed before this module ran.
for (const img of document.querySelectorAll('.app-icon-frame > img')) {
  const frame = img.parentElement;
  const broken = () => {
    frame.dataset.broken = 'true';
    img.hidden = true;
  };
  img.addEventListener('error', broken);
  if (img.complete) img.decode().catch(broken);
}
