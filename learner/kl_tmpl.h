/* kl_tmpl.h - KL estimators per floating type, included by kl.c (T, PV_SFX defined). */

void PV_SFX(pv_kl)(pv_kl_spec_t spec, size_t n, const T *logprob, const T *ref_logprob, T *kl_out,
                   T *grad_out)
{
    for (size_t i = 0; i < n; i++) {
        T d = logprob[i] - ref_logprob[i];
        T v, g;
        switch (spec.type) {
        case PV_KL_K1:
            v = d;
            g = 1;
            break;
        case PV_KL_ABS:
            v = d < 0 ? -d : d;
            g = (T)((d > 0) - (d < 0));
            break;
        case PV_KL_K2:
            v = (T)0.5 * d * d;
            g = d;
            break;
        default: { /* PV_KL_K3 */
            T kl = ref_logprob[i] - logprob[i];
            T dkl = -1; /* d(kl)/d(logprob) */
            if (kl < (T)-20 || kl > (T)20) {
                kl = kl < 0 ? (T)-20 : (T)20;
                dkl = 0;
            }
            T ratio = (T)exp((double)kl);
            T kld = ratio - kl - (T)1;
            g = (ratio - (T)1) * dkl;
            if (kld < (T)-10 || kld > (T)10) {
                kld = kld < 0 ? (T)-10 : (T)10;
                g = 0;
            }
            v = kld;
            break;
        }
        }
        if (spec.straight_through)
            g = d;
        kl_out[i] = v;
        if (grad_out)
            grad_out[i] = g;
    }
}
